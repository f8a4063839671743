"""Image resource types (OS::Glance::*)."""
