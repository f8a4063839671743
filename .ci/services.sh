#!/usr/bin/env bash
# Start the database servers the kiln.db tests use, unless they already run.
# Idempotent, no sudo (CI runs as root). PostgreSQL: 127.0.0.1:5432, user
# postgres (trust). MariaDB: 127.0.0.1:3306, user root, empty password.
set -euo pipefail

wait_for() { # wait_for NAME SECONDS COMMAND...
    local name=$1 limit=$2
    shift 2
    for ((i = 0; i < limit; i++)); do
        if "$@" >/dev/null 2>&1; then
            echo "services: $name is up"
            return 0
        fi
        sleep 1
    done
    echo "services: $name did not answer within ${limit} s" >&2
    return 1
}

if ! pg_isready -h 127.0.0.1 >/dev/null 2>&1; then
    echo "services: starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start
fi
wait_for PostgreSQL 30 pg_isready -h 127.0.0.1

if ! mysqladmin -uroot ping >/dev/null 2>&1; then
    echo "services: starting MariaDB"
    # /run is a tmpfs: the socket directory may be gone after a reboot.
    if [[ ! -d /run/mysqld ]]; then
        mkdir -p /run/mysqld
        chown mysql:mysql /run/mysqld
    fi
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
fi
wait_for MariaDB 30 mysqladmin -uroot ping

# RabbitMQ (127.0.0.1:5672, guest/guest) for the kiln.rpc tests. Started only when
# it does not answer; a running broker is left alone.
rabbit_up() { (exec 3<>/dev/tcp/127.0.0.1/5672) || rabbitmq-diagnostics -q ping; }
if ! rabbit_up >/dev/null 2>&1; then
    echo "services: starting RabbitMQ"
    # A broker still booting refuses a second start: wait_for decides.
    rabbitmq-server -detached || echo "services: rabbitmq-server -detached failed" >&2
fi
wait_for RabbitMQ 60 rabbit_up
