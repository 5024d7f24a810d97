"""Hugging Face in the tray: everything of the tray's that is Hugging Face's own, registered by
``provider.py::register()`` in the tray's provider table (``app/ui/providers.py``), which the generic views read.

    provider.py      HUGGING_FACE, its TrayProvider, and register()
    facade.py        HfFacade: the account and the look-ups (catalog, hardware), over ``HfApi``
    account.py       Settings → Hugging Face account (status, Sign in, Sign out)
    wizard/          its pages of Add rented GPU: sign in, model, GPU (endpoint or batch window),
                     settings with the cost preview, the billing confirmation, progress

Its names and words: the three provider ids it covers, the endpoint's page on its site (Quit's
"Open on Hugging Face"), what ends billing when Pairwise cannot pause (scale to zero), its Attach
choices (an endpoint by NAMESPACE/NAME is managed), and the renderings of its sign-in events.
"""
