"""The simulated Octavia v2: load balancers, listeners, pools, members, health monitors.

``model`` holds the rules and status machines (split by object kind), ``app`` the REST
API under ``/v2.0`` and ``/v2``, ``adapter`` the in-process LoadBalancerApi.
"""
