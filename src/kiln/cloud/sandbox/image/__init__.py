"""The simulated Glance v2: image model, REST app and in-process adapter."""
