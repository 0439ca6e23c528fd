// NSEJSON: JSON for every document nse reads or writes (payload, device file, protocol lines, result), mapped by
// hand, not `Codable`: `Codable` finds its types' metadata at run time (`swift_getTypeByMangledName` was already
// 17 % of the extension's own CPU).
//
// Files:
//   JSON                 an ordered value: keys keep document order (results are written in their documented order),
//                        integers stay apart from reals
//   JSONParser           strict parsing over jansson: duplicate keys, bad UTF-8, nesting over 32 are errors
//   JSONWriter           compact or pretty output
//   JSONConvertible      JSONEncodable/JSONDecodable and the one field reader, `JSONObject.field("a", "b")`:
//                        absent or null is nil for an optional; `@inlinable`, so each caller specializes it
//   JSONFieldError       one line naming the member's path and the kind it must be, never its value
//   JSONError            why a document is not acceptable JSON, and where
//   Jansson              the only file touching jansson
