// D-Bus method calls made through libdbus — which libavahi-client (and so avahi-browse,
// avahi-resolve, avahi-publish, libdns_sd) and dbus-python use — to an mDNS daemon: a call that
// browses, resolves or advertises (BusMethods.swift) is decided before it is sent, and a refused
// one never reaches the daemon; the connection stays as it was. libdbus is never linked: its
// functions are found in the library the call goes to.
#include <stdint.h>
#include "lnp_bonjour.h"
#include "lnp_core.h"
#include "lnp_next.h"
#include "lnp_sys.h"

typedef struct DBusConnection DBusConnection;
typedef struct DBusMessage DBusMessage;
typedef struct DBusPendingCall DBusPendingCall;
// libdbus's public DBusError: the name and message, then flags (the first: the message is
// constant, not to be freed) and padding.
typedef struct {
    const char *name;
    const char *message;
    unsigned int constant_message : 1;
    unsigned int other_flags : 4;
    void *padding;
} DBusError;
// libdbus's DBusMessageIter is 72 bytes of opaque fields on 64-bit systems; room to spare.
typedef struct {
    _Alignas(16) unsigned char opaque[128];
} message_iterator;

enum { METHOD_CALL = 1, TYPE_STRING = 's', TYPE_OBJECT_PATH = 'o', ARGUMENTS = 8 };

static const char denied_name[] = "org.freedesktop.DBus.Error.AccessDenied";
static const char denied_message[] = "lnp: local network access denied";
static const char undeclared_name[] = "org.freedesktop.Avahi.NotPermittedError";
static const char undeclared_message[] = "lnp: the program did not declare this Bonjour service type (--bonjour-services)";
// Where a refused call not waited for in place is sent instead: a name nobody owns on a system
// bus (its policy lets no one take it), so the bus itself answers with an error reply.
static const char nowhere[] = "lnp.LocalNetworkAccessDenied";

typedef DBusMessage *(*send_blocking_fn)(DBusConnection *, DBusMessage *, int, DBusError *);
typedef uint32_t (*send_with_reply_fn)(DBusConnection *, DBusMessage *, DBusPendingCall **, int);
typedef uint32_t (*send_fn)(DBusConnection *, DBusMessage *, uint32_t *);

// libdbus's functions lnp uses, once: (result, name in lnp, parameters, libdbus's name).
#define LIBDBUS_FUNCTIONS(F)                                                                \
    F(int, type, (DBusMessage *), "dbus_message_get_type")                                  \
    F(const char *, interface, (DBusMessage *), "dbus_message_get_interface")               \
    F(const char *, member, (DBusMessage *), "dbus_message_get_member")                     \
    F(const char *, signature, (DBusMessage *), "dbus_message_get_signature")               \
    F(uint32_t, iterator_start, (DBusMessage *, message_iterator *), "dbus_message_iter_init") \
    F(int, argument_type, (message_iterator *), "dbus_message_iter_get_arg_type")           \
    F(void, basic_value, (message_iterator *, void *), "dbus_message_iter_get_basic")       \
    F(uint32_t, next_argument, (message_iterator *), "dbus_message_iter_next")              \
    F(void, set_error, (DBusError *, const char *, const char *), "dbus_set_error_const")   \
    F(DBusMessage *, copy, (DBusMessage *), "dbus_message_copy")                            \
    F(uint32_t, set_destination, (DBusMessage *, const char *), "dbus_message_set_destination") \
    F(void, set_auto_start, (DBusMessage *, uint32_t), "dbus_message_set_auto_start")       \
    F(void, release, (DBusMessage *), "dbus_message_unref")                                 \
    F(uint32_t, descriptor, (DBusConnection *, int *), "dbus_connection_get_unix_fd")

struct accessors {
#define MEMBER(result, name, parameters, function) result(*name) parameters;
    LIBDBUS_FUNCTIONS(MEMBER)
#undef MEMBER
};

// Found in the library the call goes to (lnp_next_companion), once; NULL if any is missing.
static const struct accessors *find_accessors(enum lnp_next_symbol call) {
    static struct accessors found;
    static int state;  // 0 not looked up, 1 found, -1 missing
    int known = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (known) return known > 0 ? &found : NULL;
    struct accessors looked;
    int complete = 1;
#define LOOK_UP(result, name, parameters, function) \
    looked.name = lnp_next_companion(call, function);  \
    complete = complete && looked.name;
    LIBDBUS_FUNCTIONS(LOOK_UP)
#undef LOOK_UP
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

/// LNP_BONJOUR_ALLOWED, or the outcome of a gated call. Every libdbus has the accessors; a
/// library without them is not one lnp can read.
static int gate(const struct accessors *dbus, DBusConnection *connection, DBusMessage *message) {
    if (!dbus || !message || dbus->type(message) != METHOD_CALL) return LNP_BONJOUR_ALLOWED;
    const char *interface = dbus->interface(message), *member = dbus->member(message);
    const char *signature = dbus->signature(message);
    if (!lnp_bus_method_is_gated(interface, member, signature)) return LNP_BONJOUR_ALLOWED;
    // Decided here, so not again on the connection's stream (BusStreamGate.swift).
    int fd = -1;
    if (connection && dbus->descriptor(connection, &fd)) lnp_bus_stream_claim(fd);
    if (lnp_bonjour_decided()) return LNP_BONJOUR_ALLOWED;
    const char *arguments[ARGUMENTS];
    int count = read_arguments(dbus, message, arguments);
    return lnp_gate_bus_call(interface, member, signature, arguments, count);
}

/// The error a refused blocking call returns, set as libdbus would (or, without libdbus, by
/// hand in its public structure).
static DBusMessage *refuse(const struct accessors *dbus, DBusError *error, int outcome) {
    if (!error) return NULL;
    const char *name = outcome == LNP_BONJOUR_UNDECLARED ? undeclared_name : denied_name;
    const char *message = outcome == LNP_BONJOUR_UNDECLARED ? undeclared_message : denied_message;
    if (dbus) {
        dbus->set_error(error, name, message);
    } else if (!error->name) {
        error->name = name;
        error->message = message;
        error->constant_message = 1;
    }
    return NULL;
}

/// A copy of a refused call addressed `nowhere`, not to be started on demand, or NULL.
static DBusMessage *redirected(const struct accessors *dbus, DBusMessage *message) {
    DBusMessage *copy = dbus->copy(message);
    if (!copy) return NULL;
    if (!dbus->set_destination(copy, nowhere)) {
        dbus->release(copy);
        return NULL;
    }
    dbus->set_auto_start(copy, 0);
    return copy;
}

DBusMessage *dbus_connection_send_with_reply_and_block(DBusConnection *connection, DBusMessage *message, int timeout,
                                                       DBusError *error) {
    enum lnp_next_symbol call = LNP_NEXT_dbus_connection_send_with_reply_and_block;
    send_blocking_fn next = (send_blocking_fn)lnp_next(call);
    if (!next) return refuse(NULL, error, LNP_BONJOUR_DENIED);  // no libdbus: nothing to call
    const struct accessors *dbus = find_accessors(call);
    int outcome = gate(dbus, connection, message);
    if (outcome != LNP_BONJOUR_ALLOWED) return refuse(dbus, error, outcome);
    // libdbus sends through dbus_connection_send_with_reply, hooked too: decided once.
    int mark = lnp_mark_decided();
    DBusMessage *reply = next(connection, message, timeout, error);
    lnp_unmark_decided(mark);
    return reply;
}

// A refused call whose reply comes later goes `nowhere` instead: the bus's error reply
// (NameHasNoOwner, naming lnp's name) completes the caller's pending call. If it cannot be
// redirected, it is not sent and no pending call is made, as libdbus does on a closed
// connection.
uint32_t dbus_connection_send_with_reply(DBusConnection *connection, DBusMessage *message, DBusPendingCall **pending,
                                         int timeout) {
    enum lnp_next_symbol call = LNP_NEXT_dbus_connection_send_with_reply;
    send_with_reply_fn next = (send_with_reply_fn)lnp_next(call);
    if (!next) {
        if (pending) *pending = NULL;
        return 0;
    }
    const struct accessors *dbus = find_accessors(call);
    if (gate(dbus, connection, message) == LNP_BONJOUR_ALLOWED) return next(connection, message, pending, timeout);
    DBusMessage *copy = redirected(dbus, message);
    if (!copy) {
        if (pending) *pending = NULL;
        return 1;
    }
    uint32_t sent = next(connection, copy, pending, timeout);
    dbus->release(copy);
    return sent;
}

// A refused call sent without waiting goes `nowhere` too: a caller that looks for its reply
// by serial gets the bus's error reply.
uint32_t dbus_connection_send(DBusConnection *connection, DBusMessage *message, uint32_t *serial) {
    enum lnp_next_symbol call = LNP_NEXT_dbus_connection_send;
    send_fn next = (send_fn)lnp_next(call);
    if (!next) return 0;
    const struct accessors *dbus = find_accessors(call);
    if (gate(dbus, connection, message) == LNP_BONJOUR_ALLOWED) return next(connection, message, serial);
    DBusMessage *copy = redirected(dbus, message);
    if (!copy) return 1;
    uint32_t sent = next(connection, copy, serial);
    dbus->release(copy);
    return sent;
}
