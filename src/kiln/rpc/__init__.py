"""Engine calls as frozen dataclasses, and the transports that carry them.

The API layer builds a message, a transport delivers it to the engine's
handler for that message type, and the reply is another frozen dataclass.
Compatibility comes from optional fields with defaults, not version pins.
Imports: kiln.core only.
"""
