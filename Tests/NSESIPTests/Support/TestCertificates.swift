// Test-only self-signed certificate and key (CN=localhost, SAN localhost/127.0.0.1, P-256, 10 years).
// Generated for the NSESIP tests; never use outside tests.
enum TestCertificates {
    static let certificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBmjCCAT+gAwIBAgIUTpXCNrc9wy4qfOBrEvFM1mP6xs0wCgYIKoZIzj0EAwIw
        FDESMBAGA1UEAwwJbG9jYWxob3N0MB4XDTI2MTEyMTIxNDEwNVoXDTM2MTExODIx
        NDEwNVowFDESMBAGA1UEAwwJbG9jYWxob3N0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
        AQcDQgAE5W2uR22E3M8k1slSZq7XaFLAwK0/Q5OaFgIdjaaCu8o5aG3FZs5uGh/O
        1GHkGaUMa68/T1h8YVKUoQpop9siIqNvMG0wHQYDVR0OBBYEFGYaNT1jSSAxivDw
        BFaE4jDVrfL2MB8GA1UdIwQYMBaAFGYaNT1jSSAxivDwBFaE4jDVrfL2MA8GA1Ud
        EwEB/wQFMAMBAf8wGgYDVR0RBBMwEYIJbG9jYWxob3N0hwR/AAABMAoGCCqGSM49
        BAMCA0kAMEYCIQCi4yCcWREBR3GmRzE0/MC9GR3/SS64/Cr/VCTNB1y7ugIhAPZK
        MInVQt+2Mg3yTRRYYOzQgAoJd00AvEHMw5yOSN+M
        -----END CERTIFICATE-----
        """

    static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgjMN92iaTeQJgGcGg
        BrzzFmL/O/aNB1ChJVnbqctZ1MGhRANCAATlba5HbYTczyTWyVJmrtdoUsDArT9D
        k5oWAh2NpoK7yjlobcVmzm4aH87UYeQZpQxrrz9PWHxhUpShCmin2yIi
        -----END PRIVATE KEY-----
        """

    /// An unrelated self-signed certificate (CN=other.invalid) for negative trust tests.
    static let otherCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBhjCCASugAwIBAgIUMrwQwykisNFDU9cmHXSTVznV3EYwCgYIKoZIzj0EAwIw
        GDEWMBQGA1UEAwwNb3RoZXIuaW52YWxpZDAeFw0yNjExMjEyMTQ2NDJaFw0zNjEx
        MTgyMTQ2NDJaMBgxFjAUBgNVBAMMDW90aGVyLmludmFsaWQwWTATBgcqhkjOPQIB
        BggqhkjOPQMBBwNCAAS6rBYY5Mlr+BNmccbE9DlgjfrdYXAnJBQ5TbFEZMuqZci7
        l35IgIPpziggcVufGwqATWOc7S1i69q9vDk8KEyZo1MwUTAdBgNVHQ4EFgQUJHXV
        R7TAyMI0QXyEM8MmqovfY3EwHwYDVR0jBBgwFoAUJHXVR7TAyMI0QXyEM8Mmqovf
        Y3EwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEAtsWhCMAkHDsV
        oeLJ2spCXnfTNm+rS+t0W+gQjy+7kecCIQCXyIgYC+6uYiA83LOjXN0C2SWGeiIH
        Szt+Lvop3h/XJw==
        -----END CERTIFICATE-----
        """
}
