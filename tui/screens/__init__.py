"""Screens of the app: each owns one workflow."""
