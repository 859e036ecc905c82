// Package auth owns mqgate's API keys (API.md "Operations"): the key file
// format, the grants a key carries and the matching of a grant against a
// topic or group name. It knows nothing of HTTP: api decides which grant a
// route needs and asks a Keyring whether the caller's key holds it.
//
// Imports: the standard library only. It must not import api, gateway or
// core (cmd → api → gateway → core; auth is a leaf both cmd and api use).
//
// Invariants:
//   - only SHA-256 digests of keys are held in memory after loading; a
//     plain "key" in the file is hashed at load and dropped;
//   - Authenticate compares the token's digest with every key's digest in
//     constant time (crypto/subtle) and never stops at the first match,
//     so timing tells nothing about which key or how much of one matched;
//   - a Keyring swaps its whole key set atomically (Reload): a request sees
//     the old set or the new one, never a mix; a file that fails to load
//     leaves the old set in place.
//
// Locks: none. The Keyring holds an atomic.Pointer to an immutable Keys.
package auth
