"""Rented nodes: GPUs rented elsewhere (from any provider registered on the node, see
``provider``: a managed endpoint, a fixed window, a router billed per token, or any OpenAI-compatible
HTTPS endpoint) that a sponsor node serves to the cluster.

Map of the package (each module's docstring documents its public API):

- ``decl``      the declaration (``RentedDecl``, the request's YAML shape), URL rules
- ``store``     ``rented.json`` in the node's home; keyring key ``rented:<name>``
- ``upstream``  ``RentedUpstream`` (kind "rented"): the outbound request, states, eligibility
- ``probe``     models / credential / public-endpoint probing without inference calls
- ``hooks``     ``LifecycleHooks`` for controllers (wake on request, budget, exit, resolvers)
- ``meter``     ``CostMeter``: hourly price × time shared among concurrent workloads
- ``facts``     rows for node lists; what peers may see; ``peer_refusal`` for peers
- ``manager``   ``RentedManager``: attach / apply / set / detach / list / show
- ``operations`` what a provider may offer (creating endpoints, starting batch windows), found by what it does
- ``routes``    control routes under /_pairwise/v1/rented
- ``attach``    ``attach_rented(node)``
"""

from app.services.rented.attach import attach_rented
from app.services.rented.decl import RentedDecl, validate_decl
from app.services.rented.manager import RentedManager
from app.services.rented.upstream import RentedUpstream

__all__ = ["RentedDecl", "RentedManager", "RentedUpstream", "attach_rented", "validate_decl"]
