"""Analyses shared by passes and codegen (as upstream's lib/Analysis). See ARCHITECTURE.md."""
