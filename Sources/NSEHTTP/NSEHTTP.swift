// NSEHTTP: outgoing HTTP/1.1 and HTTP/2 (`nse push`, result callbacks, the SIP server's pushes) over libcurl.
// libcurl is loaded on first use, not linked (Sources/CCurl/shim.h): linked, its ~30 libraries cost every nse process
// about 10 ms at start-up.
//
// Files:
//   HTTPClient       one request, one connection; blocking or async
//   HTTPRequest      the request, its response, and the protocol asked for (HTTP/1.1, h2c prior knowledge, h2 by ALPN)
//   HTTPHeaders      header fields
//   HTTPClientError  one line, never a request body
//   Curl             the only file touching libcurl: every CURLcode checked where it is returned
