# signoff/redis: Debian's redis-server in an empty image: the binary, every
# library ldd lists for it and the dynamic loader, copied from the host by
# scripts/build-images.sh into deploy/build/redis/rootfs/.
#
# The entrypoint reads /etc/redis/redis.conf (listen on every address, no
# protected mode, data in /data, maxmemory-policy noeviction); arguments
# given to the container are appended and win, as with the official redis
# image: persistence is chosen at run time, by default an append-only file
# synced before each reply (docs/OPERATIONS.md "What Signoff needs from
# Redis").
FROM scratch
COPY rootfs/ /
COPY --chown=999:999 data /data
USER 999:999
WORKDIR /data
EXPOSE 6379
# redis-cli is in the image for this (and for `docker exec … redis-cli`).
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 CMD ["/usr/bin/redis-cli", "ping"]
ENTRYPOINT ["/usr/bin/redis-server", "/etc/redis/redis.conf"]
CMD ["--appendonly", "yes", "--appendfsync", "always"]
