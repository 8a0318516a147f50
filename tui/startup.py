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


_settled = False


def collect_young_garbage() -> None:
    """Collect the collector's two young generations now, once a prompt is on screen; after
    the first one, also settle what the start left (once per process).

    A compose and its paint leave thousands of new objects; left to the collector's own
    thresholds, the pass over them (3–7 ms at load for the older of the two) fell inside the
    next toggle, between the key and its frame. Here it runs while the user reads.

    The start leaves far more: the modules, Textual's screen and the catalog, alive for the
    whole session. A full collection walks all of them (150–360 ms seen under load, landing in
    a toggle now and then), so after the first counted prompt they move to the permanent
    generation (``gc.freeze``, which takes no time): later full collections walk only what
    came since. Not collected fully first (that pause would follow the first frame): what the
    start left in cycles stays, once. Once per process, so a test process that opens many
    apps freezes only the first one's objects.

    Nothing while the collector is off: the launch holds it until the first frame, and
    settles the start itself then (:mod:`promptdeck.tui.startup`); a collection now would
    walk everything the start made."""
    global _settled
    if not gc.isenabled():
        return
    gc.collect(1)
    if not _settled:
        _settled = True
        gc.freeze()
