// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Testing

/// Validates an output against its JSON Schema in docs/schemas/ with python3-jsonschema (the
/// Debian package `make deps` installs): the schemas are what we promise scripts, so the outputs
/// of a running gaend are held to them.
enum SchemaCheck {
    static let schemas = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/schemas")

    static let validator = """
        import json, sys, warnings
        warnings.simplefilter("ignore")
        import jsonschema
        import glob, os
        path, document = sys.argv[1], sys.argv[2]
        # Every schema by its $id, so that a $ref to a sibling resolves without the network.
        store = {}
        for other in glob.glob(os.path.join(os.path.dirname(path), "*.schema.json")):
            with open(other) as f:
                loaded = json.load(f)
            store[loaded["$id"]] = loaded
        with open(path) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        resolver = jsonschema.RefResolver(base_uri=schema["$id"], referrer=schema, store=store)
        errors = sorted(jsonschema.Draft202012Validator(schema, resolver=resolver).iter_errors(json.loads(document)), key=str)
        for error in errors:
            print("/".join(str(part) for part in error.absolute_path) + ": " + error.message)
        sys.exit(1 if errors else 0)
        """

    /// Records an issue naming each place `text` breaks `schema` (e.g. "status").
    static func expect(_ text: String, matches schema: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let path = schemas.appendingPathComponent("\(schema).schema.json").path
        let run = try ToolRunner.runProgram("/usr/bin/python3", ["-c", validator, path, text])
        #expect(run.status == 0, "\(schema).schema.json: \(run.standardOutput)\(run.standardError)\n\(text.prefix(2000))", sourceLocation: sourceLocation)
    }
}
