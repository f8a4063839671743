"""The simulated Cinder v3: volume, backup and volume type model, REST app and adapter."""
