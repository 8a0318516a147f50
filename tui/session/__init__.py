"""The app's session controllers: plain classes, no widget, tested without a screen.

The preview's debounce and two-pass compose, the story's phases read from the records, a
session's runs (plan, confirm, start, finish, cancel), the run confirmation prepared from core,
and the hand-off of a run's events from the reader thread.
"""
