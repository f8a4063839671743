"""Load balancing types (OS::Octavia::*): load balancers, listeners, pools, members, monitors."""
