// File: tls_client.h
//
// A blocking HTTPS client for tests: one request per connection, optional client certificate,
// optional ALPN offer. OpenSSL and Beast stay in tls_client.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpusched::testing {

struct TlsOptions {
  std::string ca_file;    // verify the server against this CA ("" = no verification)
  std::string cert_file;  // client certificate (mTLS)
  std::string key_file;
  std::vector<std::string> alpn;  // protocols to offer
};

struct TlsReply {
  bool handshake_ok = false;
  std::string error;    // why the handshake or request failed
  int status = 0;
  std::string body;
  std::string alpn;           // negotiated protocol, "" when none
  std::string peer_subject;   // the server certificate's subject
};

TlsReply TlsGet(uint16_t port, const std::string& target, const TlsOptions& options);

// Writes a CA and certificates signed by it into `dir` with the openssl command line:
// ca.crt/ca.key, server.crt/server.key (SAN 127.0.0.1, CN=`server_cn`), client.crt/client.key,
// and other-ca.crt with rogue.crt/rogue.key signed by that other CA. Returns false on failure.
bool MakeTestPki(const std::string& dir, const std::string& server_cn = "gpusched-test");

}  // namespace gpusched::testing
