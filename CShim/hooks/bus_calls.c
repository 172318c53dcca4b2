// D-Bus method calls made through libdbus's blocking call, which libavahi-client (and so
// avahi-browse, avahi-resolve, avahi-publish, libdns_sd) and dbus-python's ordinary method
// calls use. A call that browses, resolves or advertises through an mDNS daemon
// (BusMethods.swift) is decided first; a refused one is not sent, and the caller gets the
// error a bus gives a call its policy refuses — the connection stays as it was. libdbus is
// never linked: its functions are found in the library the call goes to.
#include <stdint.h>
#include "lnp_bonjour.h"
#include "lnp_core.h"
#include "lnp_next.h"
#include "lnp_sys.h"

typedef struct DBusConnection DBusConnection;
typedef struct DBusMessage DBusMessage;
typedef struct DBusError DBusError;
// libdbus's DBusMessageIter is 72 bytes of opaque fields on 64-bit systems; room to spare.
typedef struct {
    _Alignas(16) unsigned char opaque[128];
} message_iterator;

enum { METHOD_CALL = 1, TYPE_STRING = 's', TYPE_OBJECT_PATH = 'o', ARGUMENTS = 8 };

typedef DBusMessage *(*send_blocking_fn)(DBusConnection *, DBusMessage *, int, DBusError *);

// libdbus's accessors, from the library the call goes to (lnp_next_companion).
struct accessors {
    int (*type)(DBusMessage *);
    const char *(*interface)(DBusMessage *);
    const char *(*member)(DBusMessage *);
    const char *(*signature)(DBusMessage *);
    uint32_t (*iterator_start)(DBusMessage *, message_iterator *);
    int (*argument_type)(message_iterator *);
    void (*basic_value)(message_iterator *, void *);
    uint32_t (*next_argument)(message_iterator *);
    void (*set_error)(DBusError *, const char *, const char *);
};

static const struct accessors *find_accessors(void) {
    static struct accessors found;
    static int state;  // 0 not looked up, 1 found, -1 missing
    int known = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (known) return known > 0 ? &found : NULL;
    enum lnp_next_symbol call = LNP_NEXT_dbus_connection_send_with_reply_and_block;
    struct accessors looked = {
        .type = lnp_next_companion(call, "dbus_message_get_type"),
        .interface = lnp_next_companion(call, "dbus_message_get_interface"),
        .member = lnp_next_companion(call, "dbus_message_get_member"),
        .signature = lnp_next_companion(call, "dbus_message_get_signature"),
        .iterator_start = lnp_next_companion(call, "dbus_message_iter_init"),
        .argument_type = lnp_next_companion(call, "dbus_message_iter_get_arg_type"),
        .basic_value = lnp_next_companion(call, "dbus_message_iter_get_basic"),
        .next_argument = lnp_next_companion(call, "dbus_message_iter_next"),
        .set_error = lnp_next_companion(call, "dbus_set_error_const"),
    };
    int complete = looked.type && looked.interface && looked.member && looked.signature && looked.iterator_start &&
                   looked.argument_type && looked.basic_value && looked.next_argument && looked.set_error;
    // Threads racing here look up the same values; the first to store wins.
    if (complete) found = looked;
    __atomic_store_n(&state, complete ? 1 : -1, __ATOMIC_RELEASE);
    return complete ? &found : NULL;
}

/// The call's first arguments' text (NULL where an argument is not a string), and how many.
static int read_arguments(const struct accessors *dbus, DBusMessage *message, const char *arguments[ARGUMENTS]) {
    message_iterator iterator;
    if (!dbus->iterator_start(message, &iterator)) return 0;
    int count = 0;
    do {
        int type = dbus->argument_type(&iterator);
        arguments[count] = NULL;
        if (type == TYPE_STRING || type == TYPE_OBJECT_PATH) dbus->basic_value(&iterator, &arguments[count]);
        count++;
    } while (count < ARGUMENTS && dbus->next_argument(&iterator));
    return count;
}

/// LNP_BONJOUR_ALLOWED, or the outcome of a gated call.
static int gate(const struct accessors *dbus, DBusMessage *message) {
    if (dbus->type(message) != METHOD_CALL) return LNP_BONJOUR_ALLOWED;
    const char *interface = dbus->interface(message), *member = dbus->member(message);
    const char *signature = dbus->signature(message);
    if (!lnp_bus_method_is_gated(interface, member, signature)) return LNP_BONJOUR_ALLOWED;
    const char *arguments[ARGUMENTS];
    int count = read_arguments(dbus, message, arguments);
    return lnp_gate_bus_call(interface, member, signature, arguments, count);
}

DBusMessage *dbus_connection_send_with_reply_and_block(DBusConnection *connection, DBusMessage *message, int timeout,
                                                       DBusError *error) {
    enum lnp_next_symbol call = LNP_NEXT_dbus_connection_send_with_reply_and_block;
    send_blocking_fn next = (send_blocking_fn)lnp_next(call);
    if (!next) return NULL;
    // Every libdbus has the accessors; a library without them is not one lnp can read.
    const struct accessors *dbus = find_accessors();
    int outcome = dbus && message && !lnp_bonjour_decided() ? gate(dbus, message) : LNP_BONJOUR_ALLOWED;
    if (outcome == LNP_BONJOUR_ALLOWED) return next(connection, message, timeout, error);
    if (error) {
        if (outcome == LNP_BONJOUR_UNDECLARED)
            dbus->set_error(error, "org.freedesktop.Avahi.NotPermittedError",
                            "lnp: the program did not declare this Bonjour service type (--bonjour-services)");
        else
            dbus->set_error(error, "org.freedesktop.DBus.Error.AccessDenied", "lnp: local network access denied");
    }
    return NULL;
}
