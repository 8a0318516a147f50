"""Story sources: BMAD and OpenSpec adapters."""
