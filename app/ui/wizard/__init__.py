"""The Add rented GPU wizard (QWizard).

    wizard.py        RentWizard: page order, the choices made so far, the two paths
    base.py          AsyncPage: a page whose Next runs a coroutine first (sign-in, attach)
    account.py       intro (rent or attach) and Hugging Face sign-in
    choose.py        model from HF's catalog (search or typed repo id), GPU from HF's list
    configure.py     the node's settings with a live cost preview, and the billing confirmation
    progress.py      creation and live progress Initializing → Running
    attach.py        attaching an existing endpoint (URL, token, provider)
    cost.py          the cost preview's words (plain functions)
"""
