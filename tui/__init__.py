"""promptdeck's Textual app."""
