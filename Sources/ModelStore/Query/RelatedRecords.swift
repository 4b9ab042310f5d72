/// What a save does with the related models a model carries.
///
/// ```swift
/// var package = Package(name: "curl")
/// package.depends = [Package(name: "libc6"), Package(name: "zlib1g")]   // keys only
/// try package.save(related: .mustExist)    // .notFound unless both are stored already
/// try package.save(related: .skipMissing)  // links to those that are, skips the others
/// ```
public enum RelatedRecords: Sendable, Hashable {
    /// Related models are saved too, by the merge rule, and created when absent (the default
    /// of every save).
    case save
    /// Related models are references to stored records: their values are not written, and
    /// a save that names a record that does not exist throws `.notFound` listing every
    /// missing key, writing nothing.
    case mustExist
    /// Related models are references to stored records: links to those that exist are
    /// written, and the others are left out (a to-one to a missing record leaves the stored
    /// link as it was).
    case skipMissing
}
