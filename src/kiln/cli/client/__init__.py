"""The `kiln` client commands: talk to a Kiln (or Heat) API like any client."""
