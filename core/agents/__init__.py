"""Agent backends behind one interface: claude, codex, command, replay."""
