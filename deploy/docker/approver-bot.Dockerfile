# signoff/approver-bot: the approver bot (terminal, web, Slack, Telegram,
# webhook channels), one static binary in an empty image.
#
# Built by scripts/build-images.sh from deploy/build/approver-bot/: the
# binary (CGO_ENABLED=0 -trimpath) and the host's CA bundle, which the Slack
# and Telegram channels need to reach their HTTPS APIs.
FROM scratch
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY approver-bot /usr/local/bin/approver-bot
# Mount the config here (it holds password hashes and tokens: a secret), or
# pass --config; a flag beats the variable.
ENV SIGNOFF_BOT_CONFIG=/etc/signoff/approver-bot.yaml
USER 65532:65532
# http.listen: set it to 0.0.0.0:8090 in the config to publish the page.
EXPOSE 8090
# `approver-bot health` GETs http://127.0.0.1:8090/readyz (--url for another
# listener).
HEALTHCHECK --interval=5s --timeout=3s --start-period=15s --retries=3 CMD ["/usr/local/bin/approver-bot", "health"]
ENTRYPOINT ["/usr/local/bin/approver-bot"]
