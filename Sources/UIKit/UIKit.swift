// Apple's UIKit on Linux, as far as a notification service extension uses it: `UIImage`, to check that downloaded
// data is an image and to read its size; `UIDevice`, the device's iPhone and iOS release. Only the header of the
// encoded image is read (see `ImageHeader`): nothing is decoded or drawn, and there are no views, colours or screens.
//
// On Apple's platforms `import UIKit` brings Foundation with it: the same here.
@_exported public import Foundation
