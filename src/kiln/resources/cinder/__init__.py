"""Block storage resource types (OS::Cinder::*): volumes, their attachments, encryption."""
