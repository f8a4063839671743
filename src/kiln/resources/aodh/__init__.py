"""Alarming types (OS::Aodh::*): the deprecated threshold alarm of Aodh."""
