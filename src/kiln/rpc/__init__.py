"""Engine calls as frozen dataclasses, and the transports that carry them.

The API layer builds a message, a transport delivers it to the engine's
handler for that message type, and the reply is another frozen dataclass.
Compatibility comes from optional fields with defaults, not version pins.
Transports: in process (``transport.InProcessTransport``, optionally encoding
every message as the bus would) and oslo.messaging (``oslo_transport``: calls,
casts and engine wake-ups; ``codec`` turns messages and errors into JSON).
Imports: kiln.core, oslo.messaging and oslo.config.
"""
