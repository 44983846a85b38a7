/* What the proxy (egress_tls.c) and its TLS helper (tls/brig-egress-tls.c)
 * say to each other over the helper's control socket (SOCK_SEQPACKET, fd
 * TLS_CTL_FD in the helper). The helper holds the secrets and speaks TLS;
 * the proxy, which parses what the sandbox sends, holds neither.
 *
 * Queued for the helper by the proxy before it is confined (trusted), read
 * when the helper starts (at the first request):
 *   'C' port(2, host order) host NUL header NUL prefix NUL value...
 *                                   one per network.credentials entry
 *   'A'  + an fd                    network.tlsCA, opened by the proxy
 *   'E'                             the end of the configuration
 * Then, one per request to a credential's host (the proxy is confined):
 *   'R' cred(4, host order) head... + two fds: the TCP connection to the
 *       credential's host:port (judged and made by the proxy) and the
 *       proxy's end of a socketpair (the plain side)
 * The head is the request without the credential's header and without
 * the blank line that ends it: the helper adds "header: prefix value"
 * and the blank line. The helper verifies the server for the credential's
 * own host, whatever the proxy says: a proxy subverted by the sandbox can
 * send the secret nowhere else.
 * On the plain side the helper first writes one byte: TLS_OK, then the
 * response as the server sends it (the secret masked); or TLS_FAIL, then
 * a short reason, then EOF. */
#ifndef BRIG_EGRESS_TLS_PROTO_H
#define BRIG_EGRESS_TLS_PROTO_H

#define TLS_CTL_FD 3
#define TLS_HELPER_NAME "brig-egress-tls"
#define TLS_MSG_MAX ((32u << 10) + 512)     /* a request head (HTTP_HEAD_MAX) and the 'R' header */
#define TLS_SECRET_MAX 4096
#define TLS_SECRET_MIN 8                    /* shorter is no credential, and masking it would mangle responses */
#define TLS_OK 'K'
#define TLS_FAIL 'F'

#endif
