"""The Add rented GPU wizard (QWizard): the shell, the intro and the attach path. Each provider
that rents brings its own pages (``app/ui/providers.py::RentPages``, in the provider's own folder,
``app/ui/<provider>/wizard/``).

    wizard.py        RentWizard: the intro, the providers' pages, the attach path
    intro.py         rent on a provider, or attach an endpoint
    base.py          AsyncPage: a page whose Next runs a coroutine first (sign-in, attach)
    attach.py        attaching an existing endpoint (URL, token, provider)
    context.py       the context window of the copy being rented
    policies.py      when the cluster may use a rented node
    state.py         the shell's page ids
"""
