"""Resource plugins, one file per type: heat/random_string.py is OS::Heat::RandomString."""
