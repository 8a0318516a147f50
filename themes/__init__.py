"""Textual themes shipped with promptdeck."""
