from tritium.cli import entry

entry()
