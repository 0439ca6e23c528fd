// nse-tool: the full command line (swift-argument-parser): every subcommand, servers included, exec'd by `nse`.
// It bootstraps logging for its commands (as `nse-app` does for itself); the libraries take a Logger.
//
// Files:
//   NSE                         the root command and its exit statuses
//   RunCommand                  `nse run` (RunOptions, as the front door builds it)
//   ServeCommand, PushCommand   `nse serve` (NSEAPNsServer), `nse push` (NSEAPNs)
//   SIPServerCommand            `nse sip-server` (NSESIPServer)
//   DeviceCommand, KeysCommand  `nse device`, `nse keys`
//   SealCommand, SendCommand    what a sender does: seal a plaintext, send a SIP MESSAGE
//   AttachOptions, AttachmentUpload  their `--attach`: a file encrypted, uploaded to `nse files`, named in the message
//   FilesCommand                `nse files` (NSEFileServer)
//   ExtensionCommand            `nse extension build` (NSEExtensionBuild)
//   CallCommand, AppCommand     `nse call` (NSECall's caller), `nse app` (NSEMainApp)
//   ReplayCommand               `nse replay` (NSEReplay)
//   *Options, Failure           shared option groups; one-line errors with documented exit statuses
