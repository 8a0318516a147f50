"""What the app's launch holds back until its first frame is painted, and lets go of then.

A fresh app is CPU-bound from the interpreter's start to its first frame: imports, the screen's
widgets and styles, the opening's catalog and prompt. Two things would share that CPU and are
not needed for the frame, so :func:`hold_for_first_frame` (called by the launch, before Textual
is imported) holds them and :func:`first_frame_painted` (called by the main screen, once its
first frame is on screen) lets them go:

* the encoder process (:mod:`promptdeck.core.tokens.encoder_process`) is forked but builds
  nothing: on two cores, its build beside the opening helper and the screen delayed the first
  frame by 150–300 ms, and with the counts remembered the frame needs no encoder (a count that
  is not remembered asks the process, which then builds at once; on a first run, with nothing
  counted on this machine, it is not held at all);
* the cyclic garbage collector is off: the start allocates a few hundred thousand objects
  that live for the whole session (modules, Textual's screen, the catalog), and the
  collector's passes over them while they were being made cost some 100 ms of the first frame.
  Once it is painted they go to the permanent generation (``gc.freeze``), so later passes walk
  only what comes after; the few cycles the start left as garbage stay, once.
"""

from __future__ import annotations

import gc

from promptdeck.core.tokens import release_encoder_processes, start_encoder_process


def hold_for_first_frame(encoding: str) -> None:
    """Fork the encoder process, held, and turn the collector off until the first frame.

    Call it before any thread is started (the encoder process is forked from this one).
    """
    start_encoder_process(encoding, first_run_only=False, held=True)
    gc.disable()


def first_frame_painted() -> None:
    """Let the encoder process build, and the collector run again (from the next objects
    on). Nothing to do when nothing was held (the app started without the launch: tests)."""
    release_encoder_processes()
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
