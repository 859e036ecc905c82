// Package console is the built-in web console served at /console: static
// HTML, CSS and JavaScript embedded in the binary (embed.FS), no build step,
// no CDN. The page talks to the same /v1 API with the same API keys: when
// /v1 answers 401 it asks for a key, keeps it in the tab's sessionStorage
// and sends it as a Bearer token. The live tail (assets/tail.js) opens a
// group's consume stream from the browser, the key in the mqgate.key.
// subprotocol.
//
// It imports only the standard library; api mounts Handler.
package console
