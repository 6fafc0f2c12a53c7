#include "service/http/access_policy.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::http {
namespace {

struct HostCase {
  std::string_view host;
  bool allowed;
  std::string_view why;
};

// No allowed names: only loopback passes.
constexpr HostCase kLoopbackOnly[] = {
    {"localhost", true, "the name"},
    {"localhost:8080", true, "with a port"},
    {"LOCALHOST", true, "host names are case-insensitive"},
    {"LocalHost:8080", true, "case-insensitive with a port"},
    {"localhost.", true, "the root-anchored name; RFC 6761 reserves it, no one can rebind it"},
    {"localhost.:8080", true, "the same with a port"},
    {"localhost:", true, "an empty port is allowed by RFC 3986"},
    {"127.0.0.1", true, "IPv4 loopback"},
    {"127.0.0.1:8080", true, "with a port"},
    {"127.255.255.254:1", true, "all of 127.0.0.0/8 is loopback"},
    {"[::1]", true, "IPv6 loopback, bracketed as in URLs"},
    {"[::1]:8080", true, "with a port"},
    {"[0:0:0:0:0:0:0:1]:8080", true, "IPv6 loopback, long form"},
    {"", false, "missing or empty Host"},
    {"127.0.0.1.evil.com", false, "a name under an attacker's domain"},
    {"localhost.evil.com", false, "a name under an attacker's domain"},
    {"evil.com", false, "the DNS rebinding case: the attacker's name"},
    {"evil.com:127.0.0.1", false, "a port must be digits"},
    {"evil.com:8080", false, "any port"},
    {"127.1", false,
     "inet_aton shorthand: browsers and curl send 127.0.0.1, so refuse the odd spelling"},
    {"2130706433", false, "127.0.0.1 as one number: same"},
    {"0x7f.0.0.1", false, "hex: same"},
    {"127.000.000.001", false, "leading zeros: same"},
    {"0.0.0.0", false, "not a loopback address (though Linux connects it to 127.0.0.1)"},
    {"0.0.0.0:8080", false, "same with a port"},
    {"::1", false, "IPv6 must be bracketed in Host"},
    {"[::1", false, "unclosed bracket"},
    {"[::1]evil", false, "junk after the bracket"},
    {"[127.0.0.1]", false, "brackets hold IPv6 only"},
    {"[::2]", false, "not loopback"},
    {"[fe80::1%25eth0]", false, "zone ids are not loopback"},
    {"localhost:8080:8080", false, "two ports"},
    {"localhost:99999999", false, "a port longer than 5 digits"},
    {"user@localhost", false, "userinfo never appears in Host"},
    {" localhost", false, "whitespace (the HTTP parser trims it; anything left is junk)"},
    {"localhost..", false, "one trailing dot only"},
    {".", false, "the root"},
    {":8080", false, "a port without a host"},
    {std::string_view("localhost\0.evil.com", 19), false, "an embedded NUL"},
    {std::string_view("127.0.0.1\0.evil.com", 19), false, "an embedded NUL after an address"},
};

TEST(AccessPolicyTest, HostMustBeLoopback) {
  AccessPolicy policy;
  for (const HostCase& c : kLoopbackOnly) {
    EXPECT_EQ(host_allowed(policy, c.host), c.allowed) << "'" << c.host << "': " << c.why;
  }
}

TEST(AccessPolicyTest, HostMayBeAnAllowedName) {
  AccessPolicy policy{.allowed_hosts = {"box.lan", "Other.Example:9000", "[fd00::5]"}};
  EXPECT_TRUE(host_allowed(policy, "box.lan"));
  EXPECT_TRUE(host_allowed(policy, "box.lan:8080"));
  EXPECT_TRUE(host_allowed(policy, "BOX.LAN."));
  EXPECT_TRUE(host_allowed(policy, "other.example")) << "case and the entry's port are ignored";
  EXPECT_TRUE(host_allowed(policy, "[fd00::5]:8080"));
  EXPECT_TRUE(host_allowed(policy, "localhost")) << "loopback still passes";
  EXPECT_FALSE(host_allowed(policy, "evil.box.lan"));
  EXPECT_FALSE(host_allowed(policy, "box.lan.evil.com"));
  EXPECT_FALSE(host_allowed(policy, "box"));
  EXPECT_FALSE(host_allowed(policy, ""));
}

struct AuthCase {
  std::string_view header;
  bool authorized;
  std::string_view why;
};

constexpr AuthCase kWithKey[] = {
    {"Bearer sk-local-123", true, "the key"},
    {"bearer sk-local-123", true, "the scheme is case-insensitive (RFC 9110 11.1)"},
    {"BEARER sk-local-123", true, "the scheme is case-insensitive"},
    {"Bearer sk-local-124", false, "wrong key"},
    {"Bearer SK-LOCAL-123", false, "the key is case-sensitive"},
    {"Bearer sk-local-12", false, "a prefix of the key"},
    {"Bearer sk-local-1234", false, "the key and more"},
    {"Bearer sk-local-123 ", false, "a trailing space: the key is compared exactly"},
    {"Bearer  sk-local-123", false, "two spaces"},
    {"Bearer", false, "no key"},
    {"Bearer ", false, "an empty key"},
    {"", false, "no header"},
    {"sk-local-123", false, "no scheme"},
    {"Basic c2stbG9jYWwtMTIz", false, "another scheme"},
    {"Basic sk-local-123", false, "another scheme with the key"},
    {"Bearersk-local-123", false, "no space"},
};

TEST(AccessPolicyTest, KeyMustMatchWhenConfigured) {
  AccessPolicy policy{.api_key = "sk-local-123"};
  for (const AuthCase& c : kWithKey) {
    EXPECT_EQ(authorized(policy, c.header), c.authorized) << "'" << c.header << "': " << c.why;
  }
}

TEST(AccessPolicyTest, AnythingPassesWithoutAKey) {
  AccessPolicy policy;
  EXPECT_TRUE(authorized(policy, ""));
  EXPECT_TRUE(authorized(policy, "Bearer sk-whatever"));
  EXPECT_TRUE(authorized(policy, "Basic abc"));
}

TEST(AccessPolicyTest, CorsOnlyForConfiguredOrigins) {
  AccessPolicy none;
  EXPECT_EQ(cors_allow_origin(none, "http://localhost:3000"), std::nullopt);
  EXPECT_EQ(cors_allow_origin(none, ""), std::nullopt);

  AccessPolicy some{.cors_origins = {"http://localhost:3000", "https://chat.example"}};
  EXPECT_EQ(cors_allow_origin(some, "http://localhost:3000"), "http://localhost:3000");
  EXPECT_EQ(cors_allow_origin(some, "https://chat.example"), "https://chat.example");
  EXPECT_EQ(cors_allow_origin(some, "http://localhost:3001"), std::nullopt) << "another port";
  EXPECT_EQ(cors_allow_origin(some, "https://localhost:3000"), std::nullopt) << "another scheme";
  EXPECT_EQ(cors_allow_origin(some, "http://localhost"), std::nullopt);
  EXPECT_EQ(cors_allow_origin(some, "https://chat.example.evil.com"), std::nullopt);
  EXPECT_EQ(cors_allow_origin(some, "https://evil.chat.example"), std::nullopt);
  EXPECT_EQ(cors_allow_origin(some, "null"), std::nullopt) << "sandboxed frames and file://";
  EXPECT_EQ(cors_allow_origin(some, "*"), std::nullopt);
  EXPECT_EQ(cors_allow_origin(some, ""), std::nullopt);

  AccessPolicy any{.cors_origins = {"http://localhost:3000", "*"}};
  EXPECT_EQ(cors_allow_origin(any, "https://anything.example"), "*");
  EXPECT_EQ(cors_allow_origin(any, "http://localhost:3000"), "*");
  EXPECT_EQ(cors_allow_origin(any, ""), std::nullopt) << "no Origin: not a CORS request";
}

TEST(AccessPolicyTest, AnthropicClientsSendTheKeyAsXApiKey) {
  AccessPolicy policy;
  policy.api_key = "sk-local";
  EXPECT_TRUE(authorized(policy, "", "sk-local"));
  EXPECT_TRUE(authorized(policy, "Bearer wrong", "sk-local")) << "either header may carry it";
  EXPECT_FALSE(authorized(policy, "", "sk-loca"));
  EXPECT_FALSE(authorized(policy, "", "Bearer sk-local")) << "x-api-key holds the bare key";
  EXPECT_FALSE(authorized(policy, "", ""));
}

}  // namespace
}  // namespace strata::http
