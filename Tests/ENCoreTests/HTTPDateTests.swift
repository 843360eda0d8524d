// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Testing

/// RFC 9110 §5.6.7's IMF-fixdate: the example, round trips, and what is refused.
struct HTTPDateTests {
    @Test func theRFCsExampleAndRoundTrips() {
        // Sun, 06 Nov 1994 08:49:37 GMT is 784111777 (the RFC's example date).
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == UnixTime(seconds: 784_111_777))
        #expect(HTTPDate.format(UnixTime(seconds: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        for seconds: Int64 in [0, 951_782_400, 1_790_000_000, 4_102_444_799] {
            #expect(HTTPDate.parse(HTTPDate.format(UnixTime(seconds: seconds))) == UnixTime(seconds: seconds))
        }
        #expect(HTTPDate.format(UnixTime(seconds: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
        // A year before 1000 keeps its four digits (found by the clock fuzz target).
        let early = HTTPDate.format(UnixTime(seconds: -41_975_593_823))
        #expect(early == "Wed, 06 Nov 0639 08:49:37 GMT")
        #expect(HTTPDate.parse(early) == UnixTime(seconds: -41_975_593_823))
    }

    @Test func whatIsNotAnIMFFixdateIsNoWitness() {
        for text in [
            "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Mon, 06 Nov 1994 08:49:37 GMT", "Sun, 31 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 GMT ", "", "Sun, 06 Nov 1994 08:4x:37 GMT",
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
    }
}
