#include "tls_client.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>

#include <cstdlib>

namespace gpusched::testing {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

TlsReply TlsGet(uint16_t port, const std::string& target, const TlsOptions& options) {
  TlsReply reply;
  net::io_context ioc;
  ssl::context ctx(ssl::context::tls_client);
  beast::error_code ec;
  if (!options.ca_file.empty()) {
    ctx.load_verify_file(options.ca_file, ec);
    ctx.set_verify_mode(ssl::verify_peer);
  } else {
    ctx.set_verify_mode(ssl::verify_none);
  }
  if (!options.cert_file.empty()) {
    ctx.use_certificate_chain_file(options.cert_file, ec);
    if (!ec) ctx.use_private_key_file(options.key_file, ssl::context::pem, ec);
  }
  if (ec) {
    reply.error = ec.message();
    return reply;
  }
  if (!options.alpn.empty()) {
    std::string wire;
    for (const std::string& p : options.alpn) {
      wire.push_back(static_cast<char>(p.size()));
      wire += p;
    }
    SSL_CTX_set_alpn_protos(ctx.native_handle(), reinterpret_cast<const unsigned char*>(wire.data()),
                            static_cast<unsigned>(wire.size()));
  }
  beast::ssl_stream<beast::tcp_stream> stream(ioc, ctx);
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
  beast::get_lowest_layer(stream).connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), ec);
  if (!ec) stream.handshake(ssl::stream_base::client, ec);
  if (ec) {
    reply.error = ec.message();
    return reply;
  }
  reply.handshake_ok = true;
  const unsigned char* proto = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(stream.native_handle(), &proto, &len);
  reply.alpn.assign(reinterpret_cast<const char*>(proto), len);
  if (X509* cert = SSL_get1_peer_certificate(stream.native_handle())) {
    char buf[256];
    X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof buf);
    reply.peer_subject = buf;
    X509_free(cert);
  }
  http::request<http::string_body> req(http::verb::get, target, 11);
  req.set(http::field::host, "127.0.0.1");
  http::write(stream, req, ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  // With mTLS refused in TLS 1.3 the handshake may complete on the client side first; the
  // server's alert then surfaces here.
  if (!ec) http::read(stream, buffer, res, ec);
  if (ec) {
    reply.error = ec.message();
    return reply;
  }
  reply.status = res.result_int();
  reply.body = res.body();
  return reply;
}

bool MakeTestPki(const std::string& dir, const std::string& server_cn) {
  std::string d = dir;
  std::string script = fmt::format(
      R"(set -e; cd '{0}'
cat > san.cnf <<EOT
subjectAltName=IP:127.0.0.1,DNS:localhost
EOT
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=test-ca 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN={1} 2>/dev/null
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile san.cnf 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=kube-scheduler 2>/dev/null
openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 2 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.crt -days 2 -subj /CN=other-ca 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout rogue.key -out rogue.csr -subj /CN=rogue 2>/dev/null
openssl x509 -req -in rogue.csr -CA other-ca.crt -CAkey other-ca.key -CAcreateserial -out rogue.crt -days 2 2>/dev/null
)",
      d, server_cn);
  return std::system(script.c_str()) == 0;
}

}  // namespace gpusched::testing
