"""Testing helpers shipped with tritium: the random kernel generator (`tritium.testing.fuzz`)."""
