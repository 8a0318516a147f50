"""Widgets of the app, one region each."""
