"""The corpus of real plans: public projects' plan shapes read by promptdeck and by a plain
independent reader, compared project by project (see ``test_corpus.py``)."""
