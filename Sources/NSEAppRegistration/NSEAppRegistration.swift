// NSEAppRegistration: how the app registers its SIP account, exactly as liblinphone does: the REGISTER with the
// RFC 8599 push parameters and `+sip.instance`, and the user agent's settings. Shared by the extension's SIP fetch,
// the main app, the callee (`nse-app`), `nse replay` and `nse device register`; a module of its own so that neither
// NSEDevice nor the host links SIP for it.
//
// Files:
//   AppRegistration  pushParameters(for:), registration(for:account:password:), configuration(for:)
