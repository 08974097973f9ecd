"""Key-value storage: the Rust SDK's key encoding, limits, layout and error
texts, against a temporary data directory."""

import os
import shutil
import tempfile
import unittest

from support import FakeHost, lingxi_plugin as lx
from lingxi_plugin.storage import decode_key, encode_key

SAFE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_%-")


class KeyEncodingTest(unittest.TestCase):
    def test_keys_encode_to_safe_names_and_back(self):
        for key in ["counter", "../../etc/passwd", ".", "..", "a/b\\c", "ключ", "%41", "a b"]:
            name = encode_key(key)
            self.assertTrue(set(name) <= SAFE, name)
            self.assertEqual(decode_key(name), key)

    def test_encoding_is_the_rust_sdks(self):
        self.assertEqual(encode_key("counter"), "counter")
        self.assertEqual(encode_key("a/b.c"), "a%2Fb%2Ec")
        self.assertEqual(encode_key("ключ"), "%D0%BA%D0%BB%D1%8E%D1%87")
        self.assertEqual(encode_key("a b_-~"), "a%20b_-%7E")

    def test_foreign_names_decode_to_nothing(self):
        for name in ["x.tmp", "%zz", "%4", "", "%", "%C3", "a b"]:
            self.assertIsNone(decode_key(name), name)
        # Rust's u8::from_str_radix accepts one leading '+'.
        self.assertEqual(decode_key("%+A"), "\n")
        self.assertEqual(decode_key("%41%42"), "AB")
        self.assertEqual(decode_key("%4a"), "J")


class StorageTest(unittest.TestCase):
    def setUp(self):
        self.host = FakeHost().start()
        self.addCleanup(self.host.stop)
        self.dir = tempfile.mkdtemp(prefix="lingxi-py-storage-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.host.data_dir = self.dir
        self.storage = lx.Storage()

    def error(self, call):
        with self.assertRaises(lx.StorageError) as raised:
            call()
        self.assertIsInstance(raised.exception, lx.PluginError)
        return str(raised.exception)

    def test_without_a_data_directory_storage_is_unavailable(self):
        self.host.data_dir = None
        text = "plugin storage unavailable: the host gives this plugin no data directory"
        self.assertEqual(self.error(lambda: self.storage.get("k")), text)
        self.assertEqual(self.error(self.storage.dir), text)
        self.assertEqual(self.error(self.storage.keys), text)

    def test_key_limits_count_utf8_bytes(self):
        self.assertEqual(lx.MAX_KEY_BYTES, 80)
        self.storage.set("k" * 80, "v")
        self.assertEqual(self.error(lambda: self.storage.set("k" * 81, "v")),
                         f'invalid storage key "{"k" * 81}": use 1 to 80 bytes')
        self.assertEqual(self.error(lambda: self.storage.get("")),
                         'invalid storage key "": use 1 to 80 bytes')
        self.storage.set("я" * 40, "v")  # 80 bytes
        self.assertEqual(self.error(lambda: self.storage.get("я" * 40 + "x")),
                         f'invalid storage key "{"я" * 40}x": use 1 to 80 bytes')
        long_key = 'a"\\\n\t' + "x" * 80
        self.assertEqual(self.error(lambda: self.storage.remove(long_key)),
                         'invalid storage key "a\\"\\\\\\n\\t' + "x" * 80 + '": use 1 to 80 bytes')

    def test_values_round_trip_in_the_rust_layout(self):
        self.assertIsNone(self.storage.get("../x"))
        self.storage.set("../x", "v1")
        self.storage.set("counter", b"\x00\xff")
        self.assertEqual(self.storage.get_string("../x"), "v1")
        self.assertEqual(self.storage.get("counter"), b"\x00\xff")
        self.assertEqual(self.storage.get_string("counter"), "\x00\ufffd")
        self.assertEqual(sorted(os.listdir(os.path.join(self.dir, "kv"))),
                         ["%2E%2E%2Fx", "counter"])
        with open(os.path.join(self.dir, "kv", "%2E%2E%2Fx"), "rb") as f:
            self.assertEqual(f.read(), b"v1")
        self.storage.set("../x", "v2")
        self.assertEqual(self.storage.get_string("../x"), "v2")

    def test_keys_are_sorted_and_skip_foreign_files(self):
        self.assertEqual(self.storage.keys(), [])
        for key in ["b", "a", "Z", "ключ"]:
            self.storage.set(key, key)
        for foreign in ["b.tmp", "%zz", "x y"]:
            open(os.path.join(self.dir, "kv", foreign), "w").close()
        self.assertEqual(self.storage.keys(), ["Z", "a", "b", "ключ"])

    def test_remove_says_whether_the_key_existed(self):
        self.storage.set("k", "v")
        self.assertTrue(self.storage.remove("k"))
        self.assertFalse(self.storage.remove("k"))
        self.assertIsNone(self.storage.get("k"))

    def test_io_errors_have_the_rust_texts(self):
        with open(os.path.join(self.dir, "kv"), "w"):
            pass  # a file where the kv folder should be
        self.assertEqual(self.error(lambda: self.storage.get("k")),
                         "storage get 'k': Not a directory (os error 20)")
        self.assertEqual(self.error(lambda: self.storage.set("k", "v")),
                         "storage set 'k': File exists (os error 17)")
        self.assertEqual(self.error(self.storage.keys),
                         "storage keys '': Not a directory (os error 20)")
        self.assertEqual(self.error(lambda: self.storage.remove("k")),
                         "storage remove 'k': Not a directory (os error 20)")


if __name__ == "__main__":
    unittest.main()
