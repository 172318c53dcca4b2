import FoundationEssentials

/// lnp-run as ArgumentParser describes it to the manual generator (`--experimental-dump-help`),
/// without the `help` subcommand ArgumentParser adds to every command's description: lnp-run
/// has no subcommands (`lnp-run help` runs a program named help), and its manual would show one
/// in its synopsis.
enum ToolDescription {
    static func withoutHelpSubcommand(_ dump: String) -> String? {
        guard case .object(var tool) = try? JSONDecoder().decode(JSONValue.self, from: Data(dump.utf8)),
              case .object(var command) = tool["command"],
              case .array(let subcommands) = command["subcommands"] else { return nil }
        let kept = subcommands.filter { $0.commandName != "help" }
        command["subcommands"] = kept.isEmpty ? nil : .array(kept)
        tool["command"] = .object(command)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return (try? encoder.encode(JSONValue.object(tool))).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Any JSON value, read and written whole: the description's other fields pass unchanged.
private indirect enum JSONValue: Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    var commandName: String? {
        guard case .object(let fields) = self, case .string(let name) = fields["commandName"] else { return nil }
        return name
    }

    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if value.decodeNil() {
            self = .null
        } else if let bool = try? value.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? value.decode(Double.self) {
            self = .number(number)
        } else if let string = try? value.decode(String.self) {
            self = .string(string)
        } else if let array = try? value.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try value.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var value = encoder.singleValueContainer()
        switch self {
        case .null: try value.encodeNil()
        case .bool(let bool): try value.encode(bool)
        case .number(let number): try value.encode(number)
        case .string(let string): try value.encode(string)
        case .array(let array): try value.encode(array)
        case .object(let object): try value.encode(object)
        }
    }
}
