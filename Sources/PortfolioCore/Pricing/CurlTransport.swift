import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The real transport: libcurl's easy interface, loaded at run time with `dlopen`.
///
/// Why not URLSession: FoundationNetworking keeps a core ~80% busy while a request waits
/// (its event loop polls), and linking it stops `--static-swift-stdlib` builds from linking
/// without libcurl's development files. FoundationNetworking wraps this same libcurl; calling
/// it directly, `curl_easy_perform` blocks in `poll` and uses no CPU while it waits.
///
/// One request, one easy handle: no redirects (a 3xx comes back as the response), http and
/// https only, curl decompresses (`Accept-Encoding` with everything it supports) and the
/// body callback counts decompressed bytes, aborting past `maxBodyBytes`.
public struct CurlTransport: HTTPTransport {
    /// The library to load; `nil` means `libcurl.so.4`, loaded once per process.
    private let libraryName: String?

    public init() { libraryName = nil }

    /// Uses another library file (tests use a missing one).
    public init(libraryName: String) { self.libraryName = libraryName }

    /// The most header bytes accepted per response.
    static let maxHeaderBytes = 256 * 1024

    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        let curl = try (libraryName.map { CurlLibrary.load($0) } ?? CurlLibrary.shared).get()
        guard let handle = curl.easyInit() else { throw .failed("libcurl could not start a request") }
        defer { curl.easyCleanup(handle) }

        let transfer = Transfer(maxBodyBytes: max(0, request.maxBodyBytes))
        let context = Unmanaged.passRetained(transfer)
        defer { context.release() }
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: CurlLibrary.errorSize)
        errorBuffer.initialize(repeating: 0, count: CurlLibrary.errorSize)
        defer { errorBuffer.deallocate() }

        var headerList: OpaquePointer?
        defer { curl.slistFreeAll(headerList) }
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            // A header with a line break would smuggle another header in: refuse it.
            // (By scalars: "\r\n" is one Character, equal to neither "\r" nor "\n".)
            if (name + value).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw .failed("a request header contains a line break")
            }
            guard let appended = curl.slistAppend(headerList, "\(name): \(value)") else {
                throw .failed("libcurl could not build the request headers")
            }
            headerList = appended
        }

        // The whole request, connecting included, within `timeout` (at least 1 ms, at most an hour).
        let seconds = request.timeout.isFinite ? min(max(request.timeout, 0.001), 3600) : 30
        let millis = Int((seconds * 1000).rounded(.up))
        var failedOption: Int32?
        func set(_ option: Int32, _ value: Int) {
            if curl.setoptLong(handle, option, value) != 0 && failedOption == nil { failedOption = option }
        }
        func set(_ option: Int32, _ value: UnsafeRawPointer?) {
            if curl.setoptPointer(handle, option, value) != 0 && failedOption == nil { failedOption = option }
        }
        request.url.absoluteString.withCString { set(CurlOption.url, UnsafeRawPointer($0)) }  // curl copies strings
        set(CurlOption.httpGet, 1)
        set(CurlOption.noSignal, 1)
        set(CurlOption.followLocation, 0)
        // http and https only, also for any redirect curl might be asked to follow.
        let protocolsByName = "http,https".withCString { curl.setoptPointer(handle, CurlOption.protocolsString, UnsafeRawPointer($0)) }
        if protocolsByName != 0 {  // libcurl before 7.85
            set(CurlOption.protocols, CurlOption.protocolHTTP | CurlOption.protocolHTTPS)
            set(CurlOption.redirectProtocols, CurlOption.protocolHTTP | CurlOption.protocolHTTPS)
        } else {
            _ = "http,https".withCString { curl.setoptPointer(handle, CurlOption.redirectProtocolsString, UnsafeRawPointer($0)) }
        }
        "".withCString { set(CurlOption.acceptEncoding, UnsafeRawPointer($0)) }  // "" = every encoding curl decodes
        set(CurlOption.timeoutMillis, millis)
        set(CurlOption.connectTimeoutMillis, millis)
        set(CurlOption.httpHeader, headerList.map { UnsafeRawPointer($0) })
        set(CurlOption.errorBuffer, UnsafeRawPointer(errorBuffer))
        set(CurlOption.writeFunction, unsafeBitCast(curlWriteBody, to: UnsafeRawPointer.self))
        set(CurlOption.writeData, UnsafeRawPointer(context.toOpaque()))
        set(CurlOption.headerFunction, unsafeBitCast(curlWriteHeader, to: UnsafeRawPointer.self))
        set(CurlOption.headerData, UnsafeRawPointer(context.toOpaque()))
        if let failedOption { throw .failed("libcurl refused option \(failedOption)") }

        let code = curl.perform(handle)
        if code != 0 {
            if transfer.bodyTooLarge { throw .tooLarge(limit: transfer.maxBodyBytes) }
            if transfer.headersTooLarge { throw .failed("the response headers are larger than \(Self.maxHeaderBytes / 1024) KiB") }
            let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : curl.describe(code)
            switch code {
            case 28: throw .timedOut  // CURLE_OPERATION_TIMEDOUT
            case 5, 6, 7: throw .cannotConnect(detail)  // COULDNT_RESOLVE_PROXY, COULDNT_RESOLVE_HOST, COULDNT_CONNECT
            default: throw .failed("\(detail) (curl error \(code))")
            }
        }
        var status = 0
        guard curl.getinfoPointer(handle, CurlOption.infoResponseCode, &status) == 0, status > 0 else {
            throw .failed("no HTTP status in the response")
        }
        return HTTPResponse(status: status, headers: transfer.headers, body: Data(transfer.body))
    }
}

/// What one transfer received, reached from curl's callbacks through an `Unmanaged` pointer.
private final class Transfer {
    let maxBodyBytes: Int
    var body: [UInt8] = []
    var headers: [String: String] = [:]
    var headerBytes = 0
    var bodyTooLarge = false
    var headersTooLarge = false

    init(maxBodyBytes: Int) { self.maxBodyBytes = maxBodyBytes }

    /// What every curl callback starts with: the transfer behind `context` and the byte count
    /// `size × count`; `nil` (so the callback returns 0) for no data, no context or an overflow.
    static func callback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
                         _ context: UnsafeMutableRawPointer?) -> (Transfer, Int)? {
        guard let context, data != nil else { return nil }
        let (n, overflow) = size.multipliedReportingOverflow(by: count)
        guard !overflow, n > 0 else { return nil }
        return (Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue(), n)
    }
}

/// curl's write callback: appends decompressed body bytes; returning less than given aborts (CURLE_WRITE_ERROR).
private let curlWriteBody: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, context in
    guard let (transfer, n) = Transfer.callback(data, size, count, context) else { return 0 }
    if n > transfer.maxBodyBytes - transfer.body.count {
        transfer.bodyTooLarge = true
        return 0
    }
    transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: n))
    return n
}

/// curl's header callback: one header line per call, the status line of each response first.
private let curlWriteHeader: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, context in
    guard let (transfer, n) = Transfer.callback(data, size, count, context) else { return 0 }
    transfer.headerBytes += n
    if transfer.headerBytes > CurlTransport.maxHeaderBytes {
        transfer.headersTooLarge = true
        return 0
    }
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: n), as: UTF8.self)
    if line.hasPrefix("HTTP/") {
        transfer.headers = [:]  // a new response (after a 100 Continue, say)
    } else if let colon = line.firstIndex(of: ":") {
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        if let old = transfer.headers[name] { transfer.headers[name] = old + ", " + value } else { transfer.headers[name] = value }
    }
    return n
}

/// The libcurl option and info numbers bitpal uses (from curl/curl.h; stable ABI).
private enum CurlOption {
    static let writeData: Int32 = 10001
    static let url: Int32 = 10002
    static let errorBuffer: Int32 = 10010
    static let writeFunction: Int32 = 20011
    static let httpHeader: Int32 = 10023
    static let headerData: Int32 = 10029
    static let followLocation: Int32 = 52
    static let headerFunction: Int32 = 20079
    static let httpGet: Int32 = 80
    static let noSignal: Int32 = 99
    static let acceptEncoding: Int32 = 10102
    static let timeoutMillis: Int32 = 155
    static let connectTimeoutMillis: Int32 = 156
    static let protocols: Int32 = 181
    static let redirectProtocols: Int32 = 182
    static let protocolsString: Int32 = 10318
    static let redirectProtocolsString: Int32 = 10319
    static let protocolHTTP = 1
    static let protocolHTTPS = 2
    static let infoResponseCode: Int32 = 0x200000 + 2  // CURLINFO_LONG + 2
}

/// The few libcurl functions bitpal calls, looked up once with `dlsym`.
final class CurlLibrary: @unchecked Sendable {
    static let errorSize = 256  // CURL_ERROR_SIZE

    // `curl_easy_setopt` and `curl_easy_getinfo` are C variadic functions. Swift cannot call a
    // variadic C function pointer, so they are called through these fixed-argument types. On
    // x86_64 (System V) and arm64 Linux an integer or pointer argument after the fixed ones is
    // passed in the same register either way, so this works for `long` and pointer arguments,
    // the only kinds bitpal passes. Never pass a Double or a struct through them.
    typealias SetoptLong = @convention(c) (OpaquePointer?, Int32, Int) -> Int32
    typealias SetoptPointer = @convention(c) (OpaquePointer?, Int32, UnsafeRawPointer?) -> Int32
    typealias GetinfoPointer = @convention(c) (OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Int32

    let easyInit: @convention(c) () -> OpaquePointer?
    let easyCleanup: @convention(c) (OpaquePointer?) -> Void
    let perform: @convention(c) (OpaquePointer?) -> Int32
    let setoptLong: SetoptLong
    let setoptPointer: SetoptPointer
    private let getinfo: GetinfoPointer
    private let strerror: @convention(c) (Int32) -> UnsafePointer<CChar>?
    private let slistAppendC: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> OpaquePointer?
    let slistFreeAll: @convention(c) (OpaquePointer?) -> Void

    /// `libcurl.so.4` (Debian's OpenSSL flavour, package libcurl4), else its GnuTLS flavour;
    /// loaded and initialised on first use.
    static let shared: Result<CurlLibrary, TransportError> = {
        let first = load("libcurl.so.4")
        if case .failure = first, case let .success(other) = load("libcurl-gnutls.so.4") { return .success(other) }
        return first
    }()

    static func load(_ name: String) -> Result<CurlLibrary, TransportError> {
        guard let lib = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(.unavailable("cannot load \(name) (\(why)); install libcurl (Debian/Ubuntu: apt install libcurl4)"))
        }
        func symbol<T>(_ symbolName: String, as _: T.Type) -> T? {
            dlsym(lib, symbolName).map { unsafeBitCast($0, to: T.self) }
        }
        guard let globalInit = symbol("curl_global_init", as: (@convention(c) (Int) -> Int32).self),
              let easyInit = symbol("curl_easy_init", as: (@convention(c) () -> OpaquePointer?).self),
              let easyCleanup = symbol("curl_easy_cleanup", as: (@convention(c) (OpaquePointer?) -> Void).self),
              let perform = symbol("curl_easy_perform", as: (@convention(c) (OpaquePointer?) -> Int32).self),
              let setoptLong = symbol("curl_easy_setopt", as: SetoptLong.self),
              let setoptPointer = symbol("curl_easy_setopt", as: SetoptPointer.self),
              let getinfo = symbol("curl_easy_getinfo", as: GetinfoPointer.self),
              let strerror = symbol("curl_easy_strerror", as: (@convention(c) (Int32) -> UnsafePointer<CChar>?).self),
              let slistAppend = symbol("curl_slist_append",
                                       as: (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> OpaquePointer?).self),
              let slistFreeAll = symbol("curl_slist_free_all", as: (@convention(c) (OpaquePointer?) -> Void).self)
        else {
            return .failure(.unavailable("\(name) lacks the curl_easy functions bitpal needs"))
        }
        // CURL_GLOBAL_DEFAULT (SSL); bitpal makes requests from one thread at a time.
        guard globalInit(3) == 0 else { return .failure(.unavailable("libcurl failed to initialise")) }
        return .success(CurlLibrary(
            easyInit: easyInit, easyCleanup: easyCleanup, perform: perform, setoptLong: setoptLong,
            setoptPointer: setoptPointer, getinfo: getinfo, strerror: strerror, slistAppend: slistAppend,
            slistFreeAll: slistFreeAll))
    }

    private init(
        easyInit: @escaping @convention(c) () -> OpaquePointer?, easyCleanup: @escaping @convention(c) (OpaquePointer?) -> Void,
        perform: @escaping @convention(c) (OpaquePointer?) -> Int32, setoptLong: @escaping SetoptLong,
        setoptPointer: @escaping SetoptPointer, getinfo: @escaping GetinfoPointer,
        strerror: @escaping @convention(c) (Int32) -> UnsafePointer<CChar>?,
        slistAppend: @escaping @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> OpaquePointer?,
        slistFreeAll: @escaping @convention(c) (OpaquePointer?) -> Void
    ) {
        self.easyInit = easyInit
        self.easyCleanup = easyCleanup
        self.perform = perform
        self.setoptLong = setoptLong
        self.setoptPointer = setoptPointer
        self.getinfo = getinfo
        self.strerror = strerror
        self.slistAppendC = slistAppend
        self.slistFreeAll = slistFreeAll
    }

    func slistAppend(_ list: OpaquePointer?, _ line: String) -> OpaquePointer? {
        line.withCString { slistAppendC(list, $0) }  // curl copies the string
    }

    /// A `long` info value (e.g. the response code).
    func getinfoPointer(_ handle: OpaquePointer, _ info: Int32, _ value: inout Int) -> Int32 {
        withUnsafeMutablePointer(to: &value) { getinfo(handle, info, UnsafeMutableRawPointer($0)) }
    }

    func describe(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "curl error \(code)"
    }
}
