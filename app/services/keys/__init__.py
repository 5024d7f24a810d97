"""Requesters: who asked, with which key, and what they may spend.

Map of the package (each module's docstring documents its public API):

- ``store``       ``KeyStore``: named keys kept as SHA-256 digests (keys.json, 0600)
- ``auth``        the doors' key checks (optional on loopback, required on the LAN), failed-key throttle,
                  the ``Caller`` of a request
- ``limits``      ``RequesterLimits``: per-peer and per-key daily spend and request rates on rented nodes
- ``limit_text``  the words of a limit refusal, written by the sponsor and read back by its peer
- ``lan``         ``LanDoor``: the HTTPS LAN door and its certificate, issued by the node certificate
- ``service``     ``RequesterService``: what the control API and the tray call
- ``attach``      ``attach_requesters(node)``
"""
