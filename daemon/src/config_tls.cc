// asnd.yaml's listen.tls: the PEM files of the mutual-TLS listener, checked when the file
// is read (each key's reader calls check_pem_file) and loaded whole at start (load_tls).
#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "asn/text/text.hpp"
#include "config.hpp"
#include "config_keys.hpp"

namespace asn {
namespace config_keys {

namespace {

// The PEM files of listen.tls. Each is read whole (a regular file of at most kMaxPemBytes)
// and parsed with OpenSSL, the library gRPC serves TLS with, so that a file asnd accepts
// here is one its TLS listener accepts too.
std::string read_pem_file(const std::string& where, const std::string& path) {
  validate_absolute(where, path);
  auto cannot = [&](const std::string& why) {
    bad(where, fmt::format("cannot read {}: {}", text::quoted(path, 256), why));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) cannot(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) cannot(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) cannot("not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxPemBytes) {
    cannot(fmt::format("it is larger than {} KiB", kMaxPemBytes / 1024));
  }
  std::string text(kMaxPemBytes + 1, '\0');
  size_t done = 0;
  for (;;) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) cannot(std::strerror(errno));
    if (n == 0) break;
    done += static_cast<size_t>(n);
    if (done == text.size()) cannot(fmt::format("it is larger than {} KiB", kMaxPemBytes / 1024));
  }
  text.resize(done);
  return text;
}

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;
using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

Bio memory_bio(const std::string& text) {
  return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())), BIO_free);
}

// Never prompts for a passphrase (asnd has no terminal): an encrypted key fails to load.
int no_passphrase(char*, int, int, void*) { return -1; }

// The certificates of a PEM file, in order; throws naming the file when it holds none or a
// damaged one.
std::vector<X509Ptr> parse_certificates(const std::string& where, const std::string& path,
                                        const std::string& pem) {
  std::vector<X509Ptr> certs;
  Bio bio = memory_bio(pem);
  ERR_clear_error();
  for (;;) {
    X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, no_passphrase, nullptr), X509_free);
    if (!cert) break;
    certs.push_back(std::move(cert));
  }
  const unsigned long err = ERR_peek_last_error();
  ERR_clear_error();
  // Reading stops with "no start line" at the end of the file; anything else is a damaged
  // certificate.
  const bool at_end =
      err == 0 || (ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE);
  if (certs.empty() || !at_end) {
    const bool has_key = pem.find("PRIVATE KEY-----") != std::string::npos;
    bad(where,
        fmt::format("{} {}: expected PEM certificates ('-----BEGIN CERTIFICATE-----' "
                    "blocks){}",
                    text::quoted(path, 256),
                    at_end ? "holds no certificate" : "holds a damaged certificate",
                    has_key ? "; it holds a private key, which belongs in listen.tls.key" : ""));
  }
  return certs;
}

KeyPtr parse_private_key(const std::string& where, const std::string& path,
                         const std::string& pem) {
  Bio bio = memory_bio(pem);
  ERR_clear_error();
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr), EVP_PKEY_free);
  ERR_clear_error();
  if (!key) {
    std::string why = "holds no private key";
    if (pem.find("ENCRYPTED") != std::string::npos) {
      why =
          "holds an encrypted private key: asnd cannot ask for a passphrase (decrypt it with "
          "'openssl pkey -in KEY -out KEY.plain' and keep that file readable by asnd only)";
    } else if (pem.find("PRIVATE KEY-----") != std::string::npos) {
      why = "holds a damaged private key";
    } else if (pem.find("CERTIFICATE-----") != std::string::npos) {
      why = "holds a certificate, not a private key (the certificate belongs in listen.tls.cert)";
    }
    bad(where, fmt::format("{} {}: expected a PEM private key ('-----BEGIN PRIVATE KEY-----', "
                           "'-----BEGIN RSA PRIVATE KEY-----' or '-----BEGIN EC PRIVATE "
                           "KEY-----')",
                           text::quoted(path, 256), why));
  }
  return key;
}

}  // namespace

void check_pem_file(const std::string& where, const std::string& path, PemKind kind) {
  const std::string pem = read_pem_file(where, path);
  if (kind == PemKind::kCertificates) {
    parse_certificates(where, path, pem);
  } else {
    parse_private_key(where, path, pem);
  }
}

}  // namespace config_keys

using namespace config_keys;

TlsMaterial load_tls(const TlsConfig& tls, const std::string& where) {
  const std::pair<const char*, const std::string*> files[] = {
      {"cert", &tls.cert}, {"key", &tls.key}, {"client_ca", &tls.client_ca}};
  for (const auto& [name, value] : files) {
    if (value->empty()) {
      bad(where + "listen.tls",
          fmt::format("{} is missing: mutual TLS needs cert (asnd's certificate), key (its "
                      "private key) and client_ca (the CA that signs client certificates)",
                      name));
    }
  }
  TlsMaterial out;
  out.cert_chain = read_pem_file(where + "listen.tls.cert", tls.cert);
  out.private_key = read_pem_file(where + "listen.tls.key", tls.key);
  out.client_ca = read_pem_file(where + "listen.tls.client_ca", tls.client_ca);
  const auto chain = parse_certificates(where + "listen.tls.cert", tls.cert, out.cert_chain);
  const KeyPtr key = parse_private_key(where + "listen.tls.key", tls.key, out.private_key);
  parse_certificates(where + "listen.tls.client_ca", tls.client_ca, out.client_ca);
  ERR_clear_error();
  const bool matches = X509_check_private_key(chain.front().get(), key.get()) == 1;
  ERR_clear_error();
  if (!matches) {
    bad(where + "listen.tls.key",
        fmt::format("{} is not the private key of the certificate in {} (listen.tls.cert)",
                    text::quoted(tls.key, 256), text::quoted(tls.cert, 256)));
  }
  return out;
}

}  // namespace asn
