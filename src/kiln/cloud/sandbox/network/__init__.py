"""The simulated Neutron v2.0 (network) service: model, REST app and in-process adapter."""
