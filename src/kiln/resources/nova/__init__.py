"""Compute resource types (OS::Nova::*): servers, key pairs, server groups and flavors."""
