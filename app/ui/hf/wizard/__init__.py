"""Hugging Face's pages of Add rented GPU (``pages.py::HfRentPages``, added to ``app/ui/wizard``'s shell).

    pages.py         HfRentPages: the pages, their order, Cancel once billing has started
    state.py         the pages' ids and the choices made so far
    sign_in.py       sign in with a fine-grained token
    choose.py        model from HF's catalog (search or typed repo id), GPU from HF's list
    window.py        Endpoint or Batch window, and a window's length and whole cost
    fit.py           what a model needs and which GPU fits it
    configure.py     the node's settings with a live cost preview, and the billing confirmation
    cost.py          the cost preview's words (plain functions)
    progress.py      creation and live progress Initializing → Running
"""
