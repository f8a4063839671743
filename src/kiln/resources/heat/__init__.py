"""Heat's own resource types (OS::Heat::*)."""
